"""Reports people look at: one rendering layer over the API's values.

:mod:`.view` gathers a plan's state, the evidence behind it, the stale chains and the audit
into one :class:`~.view.ReportView`; the renderers turn it into Markdown with a Mermaid graph
(:mod:`.markdown`), one self-contained HTML page with an inline SVG graph (:mod:`.html`,
laid out by :mod:`.layout`), Graphviz DOT (:mod:`.dot`); :mod:`.sarif` turns lint findings
into SARIF 2.1.0 and :mod:`.github` speaks to GitHub Actions (step summary, annotations). The
CLI and the pytest plugin both use them; nothing here opens a store or runs git.
"""
