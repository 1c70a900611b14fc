"""The builders of the package's runtime classes, compiled ahead of time.

Written by ``python -m pytest_plangraph.plan.prebuild`` (see that module): do not edit. Each
entry is the builder's source, as :func:`~pytest_plangraph.plan.frozen.builder_source`
writes it, and a function that makes it from the names the source reads.
"""

# mypy: ignore-errors
# fmt: off

def _0(cls, twin, new, setattr, SEEN, given, required, default0, default1, default3, default4, default8, default9, default10, default11, default12):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data.get('id', default0)
            value.seq = data.get('seq', default1)
            value.kind = data['kind']
            value.node = data.get('node', default3)
            value.criterion = data.get('criterion', default4)
            value.at = data['at']
            value.by = data['by']
            value.plan_digest = data['plan_digest']
            value.payload = data['payload'] if 'payload' in data else default8()
            value.idempotency_key = data.get('idempotency_key', default9)
            value.prev = data.get('prev', default10)
            value.hash = data.get('hash', default11)
            value.signature = data.get('signature', default12)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _1(cls, twin, new, setattr, SEEN, given, required, default8, default9, default10, default11):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data['id']
            value.plan = data['plan']
            value.node = data['node']
            value.criterion = data['criterion']
            value.criterion_digest = data['criterion_digest']
            value.input_digest = data['input_digest']
            value.verifier = data['verifier']
            value.outcome = data['outcome']
            value.reason = data.get('reason', default8)
            value.details = data['details'] if 'details' in data else default9()
            value.subjects = data['subjects'] if 'subjects' in data else default10()
            value.git = data.get('git', default11)
            value.run = data['run']
            value.recorded_by = data['recorded_by']
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _2(cls, twin, new, setattr, SEEN, given, required, default0, default1, default2):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.commit = data.get('commit', default0)
            value.dirty = data.get('dirty', default1)
            value.branch = data.get('branch', default2)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _3(cls, twin, new, setattr, SEEN, given, required):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data['id']
            value.version = data['version']
            value.digest = data['digest']
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _4(cls, twin, new, setattr, SEEN, given, required, default4, default6, default7, default8):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data['id']
            value.started = data['started']
            value.finished = data['finished']
            value.python = data['python']
            value.pytest = data.get('pytest', default4)
            value.plugin = data['plugin']
            value.ci = data['ci'] if 'ci' in data else default6()
            value.optimize = data.get('optimize', default7)
            value.assert_mode = data.get('assert_mode', default8)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _5(cls, twin, new, setattr, SEEN, given, required, default1):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.role = data.get('role', default1)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _6(cls, twin, new, setattr, SEEN, given, required, default2, default3):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.path = data['path']
            value.sha256 = data.get('sha256', default2)
            value.min_bytes = data.get('min_bytes', default3)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _7(cls, twin, new, setattr, SEEN, given, required, default2, default3, default4):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.run = data['run']
            value.timeout_s = data.get('timeout_s', default2)
            value.subjects = data['subjects'] if 'subjects' in data else default3()
            value.cwd = data.get('cwd', default4)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _8(cls, twin, new, setattr, SEEN, given, required, default1, default2, convert3):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data['id']
            value.assertion = data.get('assertion', default1)
            value.required = data.get('required', default2)
            value.verifier = convert3(data['verifier'])
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _9(cls, twin, new, setattr, SEEN, given, required, default3, default4, default5, default6, default7):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.from_ = data['from']
            value.to = data['to']
            value.type = data['type']
            value.strength = data.get('strength', default3)
            value.artifacts = data.get('artifacts', default4)
            value.source = data.get('source', default5)
            value.confidence = data.get('confidence', default6)
            value.status = data.get('status', default7)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _10(cls, twin, new, setattr, SEEN, given, required, default1, default2, default3, default4, build5, default5, default6, default7, default8, default9, default10, default11, default12, default13, default14, default15, default16):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.id = data['id']
            value.kind = data.get('kind', default1)
            value.title = data.get('title', default2)
            value.parent = data.get('parent', default3)
            value.outputs = data['outputs'] if 'outputs' in data else default4()
            value.acceptance = [build5(item) for item in data['acceptance']] if 'acceptance' in data else default5()
            value.constraints = data['constraints'] if 'constraints' in data else default6()
            value.risk = data.get('risk', default7)
            value.owner = data.get('owner', default8)
            value.cancelled = data.get('cancelled', default9)
            value.effect = data.get('effect', default10)
            value.compensate = data.get('compensate', default11)
            value.idempotent = data.get('idempotent', default12)
            value.max_retry = data.get('max_retry', default13)
            value.timeout_s = data.get('timeout_s', default14)
            value.inputs = data['inputs'] if 'inputs' in data else default15()
            value.outputs_schema = data['outputs_schema'] if 'outputs_schema' in data else default16()
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _11(cls, twin, new, setattr, SEEN, given, required, default2, default3, default4, build5, default5, build6, default6, build7, default7):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.plangraph = data['plangraph']
            value.plan = data['plan']
            value.title = data.get('title', default2)
            value.description = data.get('description', default3)
            value.max_replan_rounds = data.get('max_replan_rounds', default4)
            value.defaults = build5(data['defaults']) if 'defaults' in data else default5()
            value.nodes = [build6(item) for item in data['nodes']] if 'nodes' in data else default6()
            value.edges = [build7(item) for item in data['edges']] if 'edges' in data else default7()
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _12(cls, twin, new, setattr, SEEN, given, required, default1):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.extras = data['extras'] if 'extras' in data else default1()
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _13(cls, twin, new, setattr, SEEN, given, required):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.schema_path = data['schema']
            value.artifact = data['artifact']
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _14(cls, twin, new, setattr, SEEN, given, required, default1, default2, default3, default4, default5):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.type = data['type']
            value.tests = data['tests'] if 'tests' in data else default1()
            value.exclude = data['exclude'] if 'exclude' in data else default2()
            value.skips = data.get('skips', default3)
            value.xfail = data.get('xfail', default4)
            value.min_passed = data.get('min_passed', default5)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _15(cls, twin, new, setattr, SEEN, given, required, build0, default0):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.test = build0(data['test']) if 'test' in data else default0()
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

def _16(cls, twin, new, setattr, SEEN, given, required, default0, default1, default2):
    def build(data):
        listed = tuple(data)
        fields = SEEN.get(listed)
        if fields is None:
            fields = given(data, listed)
        value = new(twin)
        try:
            value.skips = data.get('skips', default0)
            value.xfail = data.get('xfail', default1)
            value.min_passed = data.get('min_passed', default2)
        except KeyError:
            required(cls, data)
        value.fields_set = fields
        value.__class__ = cls
        return value
    return build

BUILDERS = {
    'pytest_plangraph.plan.events.Event': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data.get('id', default0)\n        value.seq = data.get('seq', default1)\n        value.kind = data['kind']\n        value.node = data.get('node', default3)\n        value.criterion = data.get('criterion', default4)\n        value.at = data['at']\n        value.by = data['by']\n        value.plan_digest = data['plan_digest']\n        value.payload = data['payload'] if 'payload' in data else default8()\n        value.idempotency_key = data.get('idempotency_key', default9)\n        value.prev = data.get('prev', default10)\n        value.hash = data.get('hash', default11)\n        value.signature = data.get('signature', default12)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _0),
    'pytest_plangraph.plan.evidence.Evidence': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data['id']\n        value.plan = data['plan']\n        value.node = data['node']\n        value.criterion = data['criterion']\n        value.criterion_digest = data['criterion_digest']\n        value.input_digest = data['input_digest']\n        value.verifier = data['verifier']\n        value.outcome = data['outcome']\n        value.reason = data.get('reason', default8)\n        value.details = data['details'] if 'details' in data else default9()\n        value.subjects = data['subjects'] if 'subjects' in data else default10()\n        value.git = data.get('git', default11)\n        value.run = data['run']\n        value.recorded_by = data['recorded_by']\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _1),
    'pytest_plangraph.plan.evidence.GitInfo': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.commit = data.get('commit', default0)\n        value.dirty = data.get('dirty', default1)\n        value.branch = data.get('branch', default2)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _2),
    'pytest_plangraph.plan.evidence.PlanRef': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data['id']\n        value.version = data['version']\n        value.digest = data['digest']\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _3),
    'pytest_plangraph.plan.evidence.RunInfo': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data['id']\n        value.started = data['started']\n        value.finished = data['finished']\n        value.python = data['python']\n        value.pytest = data.get('pytest', default4)\n        value.plugin = data['plugin']\n        value.ci = data['ci'] if 'ci' in data else default6()\n        value.optimize = data.get('optimize', default7)\n        value.assert_mode = data.get('assert_mode', default8)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _4),
    'pytest_plangraph.plan.model.ApprovalVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.role = data.get('role', default1)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _5),
    'pytest_plangraph.plan.model.ArtifactVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.path = data['path']\n        value.sha256 = data.get('sha256', default2)\n        value.min_bytes = data.get('min_bytes', default3)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _6),
    'pytest_plangraph.plan.model.CommandVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.run = data['run']\n        value.timeout_s = data.get('timeout_s', default2)\n        value.subjects = data['subjects'] if 'subjects' in data else default3()\n        value.cwd = data.get('cwd', default4)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _7),
    'pytest_plangraph.plan.model.Criterion': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data['id']\n        value.assertion = data.get('assertion', default1)\n        value.required = data.get('required', default2)\n        value.verifier = convert3(data['verifier'])\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _8),
    'pytest_plangraph.plan.model.Edge': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.from_ = data['from']\n        value.to = data['to']\n        value.type = data['type']\n        value.strength = data.get('strength', default3)\n        value.artifacts = data.get('artifacts', default4)\n        value.source = data.get('source', default5)\n        value.confidence = data.get('confidence', default6)\n        value.status = data.get('status', default7)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _9),
    'pytest_plangraph.plan.model.Node': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.id = data['id']\n        value.kind = data.get('kind', default1)\n        value.title = data.get('title', default2)\n        value.parent = data.get('parent', default3)\n        value.outputs = data['outputs'] if 'outputs' in data else default4()\n        value.acceptance = [build5(item) for item in data['acceptance']] if 'acceptance' in data else default5()\n        value.constraints = data['constraints'] if 'constraints' in data else default6()\n        value.risk = data.get('risk', default7)\n        value.owner = data.get('owner', default8)\n        value.cancelled = data.get('cancelled', default9)\n        value.effect = data.get('effect', default10)\n        value.compensate = data.get('compensate', default11)\n        value.idempotent = data.get('idempotent', default12)\n        value.max_retry = data.get('max_retry', default13)\n        value.timeout_s = data.get('timeout_s', default14)\n        value.inputs = data['inputs'] if 'inputs' in data else default15()\n        value.outputs_schema = data['outputs_schema'] if 'outputs_schema' in data else default16()\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _10),
    'pytest_plangraph.plan.model.Plan': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.plangraph = data['plangraph']\n        value.plan = data['plan']\n        value.title = data.get('title', default2)\n        value.description = data.get('description', default3)\n        value.max_replan_rounds = data.get('max_replan_rounds', default4)\n        value.defaults = build5(data['defaults']) if 'defaults' in data else default5()\n        value.nodes = [build6(item) for item in data['nodes']] if 'nodes' in data else default6()\n        value.edges = [build7(item) for item in data['edges']] if 'edges' in data else default7()\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _11),
    'pytest_plangraph.plan.model.PluginVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.extras = data['extras'] if 'extras' in data else default1()\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _12),
    'pytest_plangraph.plan.model.SchemaVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.schema_path = data['schema']\n        value.artifact = data['artifact']\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _13),
    'pytest_plangraph.plan.model.TestVerifier': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.type = data['type']\n        value.tests = data['tests'] if 'tests' in data else default1()\n        value.exclude = data['exclude'] if 'exclude' in data else default2()\n        value.skips = data.get('skips', default3)\n        value.xfail = data.get('xfail', default4)\n        value.min_passed = data.get('min_passed', default5)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _14),
    'pytest_plangraph.plan.policy.PlanDefaults': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.test = build0(data['test']) if 'test' in data else default0()\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _15),
    'pytest_plangraph.plan.policy.TestDefaults': ("def build(data):\n    listed = tuple(data)\n    fields = SEEN.get(listed)\n    if fields is None:\n        fields = given(data, listed)\n    value = new(twin)\n    try:\n        value.skips = data.get('skips', default0)\n        value.xfail = data.get('xfail', default1)\n        value.min_passed = data.get('min_passed', default2)\n    except KeyError:\n        required(cls, data)\n    value.fields_set = fields\n    value.__class__ = cls\n    return value", _16),
}
