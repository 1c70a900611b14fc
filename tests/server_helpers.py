"""A real ``plangraph serve`` in a subprocess on a free loopback port, and a client for it."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from cli_helpers import PLANGRAPH, _environment

JSON = {"content-type": "application/json"}


@dataclass
class Server:
    """A running server: its process, base URL and the files holding what it printed."""

    proc: subprocess.Popen[bytes]
    url: str
    out: Path
    err: Path

    def client(self) -> httpx.Client:
        """A client of this server (closed by the caller)."""
        return httpx.Client(base_url=self.url, timeout=60)

    def get(self, path: str) -> httpx.Response:
        with self.client() as client:
            return client.get(path)

    def post(self, path: str, body: Any = None, key: str | None = None) -> httpx.Response:
        headers = dict(JSON)
        if key is not None:
            headers["Idempotency-Key"] = key
        content = None if body is None else json.dumps(body)
        with self.client() as client:
            return client.post(path, content=content, headers=headers)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start(root: Path, *args: str, env: dict[str, str] | None = None, name: str = "serve") -> Server:
    """Start ``plangraph serve --port 0`` in *root* and wait until it listens."""
    out, err = root.parent / f"{name}.out", root.parent / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(PLANGRAPH), "serve", "--port", "0", *args],
            cwd=root,
            env=_environment(env),
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        said = out.read_text(encoding="utf-8")
        if "listening on " in said:
            url = said.split("listening on ", 1)[1].split()[0]
            return Server(proc, url, out, err)
        if said.startswith("{") and said.endswith("\n"):  # --format json
            return Server(proc, json.loads(said.splitlines()[0])["url"], out, err)
        if proc.poll() is not None:
            raise AssertionError(f"plangraph serve exited {proc.returncode}: {err.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"plangraph serve did not listen within a minute: {err.read_text()}")


def is_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """Assert *response* is an RFC 9457 problem of *status* and *code*; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail"} <= set(body), body
    assert body["status"] == status and body["code"] == code, body
    assert "Traceback" not in response.text
    return body
