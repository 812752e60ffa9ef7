"""Post or update ONE pull-request comment, found again by a hidden marker (used by the GitHub Action).

`python -m kueueplan.workflow.prcomment BODY_FILE` reads GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL and
KUEUEPLAN_PR (the pull request number) from the environment. Standard library only: the action runs it before
anything else is installed, and it must never print the token.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any, Callable

MARKER = "<!-- kueueplan-diff -->"
MAX_BODY = 65_000  # GitHub refuses comments over 65536 characters

Request = Callable[[str, str, dict[str, Any] | None], Any]


def prepare_body(text: str, marker: str = MARKER) -> str:
    body = text if marker in text else f"{marker}\n{text}"
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n… (truncated; run `kueueplan diff` locally for the full report)\n"
    return body


def find_marked(comments: list[dict[str, Any]], marker: str = MARKER) -> dict[str, Any] | None:
    """The first comment carrying the marker (the one this action wrote earlier)."""
    return next((c for c in comments if marker in str(c.get("body") or "")), None)


def upsert(request: Request, repo: str, pr: str, body: str, marker: str = MARKER) -> tuple[str, int]:
    """Update the marked comment or create it. Returns ("updated" | "created", comment id)."""
    page = 1
    while True:
        comments = request("GET", f"/repos/{repo}/issues/{pr}/comments?per_page=100&page={page}", None)
        found = find_marked(comments, marker)
        if found is not None:
            request("PATCH", f"/repos/{repo}/issues/comments/{found['id']}", {"body": body})
            return "updated", int(found["id"])
        if len(comments) < 100:
            break
        page += 1
    created = request("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": body})
    return "created", int(created["id"])


def github_request(api: str, token: str) -> Request:
    def request(method: str, path: str, payload: dict[str, Any] | None) -> Any:
        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(api.rstrip("/") + path, data=data, method=method, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the API URL comes from the runner
            return json.loads(resp.read() or b"null")

    return request


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m kueueplan.workflow.prcomment BODY_FILE", file=sys.stderr)
        return 2
    env = os.environ
    missing = [k for k in ("GITHUB_TOKEN", "GITHUB_REPOSITORY", "KUEUEPLAN_PR") if not env.get(k)]
    if missing:
        print(f"error: {', '.join(missing)} not set; cannot comment", file=sys.stderr)
        return 2
    body = prepare_body(Path(argv[0]).read_text(encoding="utf-8"))
    request = github_request(env.get("GITHUB_API_URL", "https://api.github.com"), env["GITHUB_TOKEN"])
    action, comment_id = upsert(request, env["GITHUB_REPOSITORY"], env["KUEUEPLAN_PR"], body)
    print(f"{action} comment {comment_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
