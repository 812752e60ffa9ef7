"""Post or update ONE pull-request comment, found again by a hidden marker (used by the GitHub Action).

`python -I -m kueueplan.workflow.prcomment BODY_FILE` reads GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL
and KUEUEPLAN_PR (the pull request number) from the environment. Standard library only, and it must never print
the token.

Only a comment that carries the marker AND was written by the token's own user is edited: anybody can paste the
marker into a comment of their own, and editing theirs would put our report under their name. A GITHUB_TOKEN is
an app installation token, whose user is `github-actions[bot]` (GET /user is refused for it); a personal token's
user is whoever GET /user returns. A refused request (403 on pull requests from forks, whose token is read-only)
ends with a clear message, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

from kueueplan.report.escape import gh_data

MARKER = "<!-- kueueplan-diff -->"
MAX_BODY = 65_000  # GitHub refuses comments over 65536 characters
ACTIONS_BOT = "github-actions[bot]"

Request = Callable[[str, str, dict[str, Any] | None], Any]


def prepare_body(text: str, marker: str = MARKER) -> str:
    body = text if marker in text else f"{marker}\n{text}"
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n… (truncated; run `kueueplan diff` locally for the full report)\n"
    return body


class ApiError(Exception):
    """A GitHub API request that failed; `status` is the HTTP status (0 when there was no answer)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _author(comment: dict[str, Any]) -> str:
    user = comment.get("user")
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def find_marked(comments: list[dict[str, Any]], authors: set[str], marker: str = MARKER) -> dict[str, Any] | None:
    """The first comment carrying the marker written by one of `authors` (the one this action wrote earlier)."""
    return next((c for c in comments if marker in str(c.get("body") or "") and _author(c) in authors), None)


def own_logins(request: Request) -> set[str]:
    """Who the token writes as: the authenticated user, or github-actions[bot] for an installation token."""
    try:
        me = request("GET", "/user", None)
    except ApiError:
        return {ACTIONS_BOT}  # installation tokens may not read /user
    login = me.get("login") if isinstance(me, dict) else None
    return {str(login)} if login else {ACTIONS_BOT}


def upsert(request: Request, repo: str, pr: str, body: str, marker: str = MARKER) -> tuple[str, int]:
    """Update our marked comment or create it. Returns ("updated" | "created", comment id)."""
    authors = own_logins(request)
    page = 1
    while True:
        comments = request("GET", f"/repos/{repo}/issues/{pr}/comments?per_page=100&page={page}", None)
        if not isinstance(comments, list):
            raise ApiError(0, "unexpected answer listing the pull request's comments")
        found = find_marked(comments, authors, marker)
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
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the API URL comes from the runner
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            raise ApiError(err.code, f"{method} {path.split('?')[0]}: HTTP {err.code} {err.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise ApiError(0, f"{method} {path.split('?')[0]}: {getattr(err, 'reason', err)}") from None

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
    try:
        body = prepare_body(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    except OSError as err:
        print(f"error: cannot read the comment body {argv[0]}: {err.strerror or err}", file=sys.stderr)
        return 2
    request = github_request(env.get("GITHUB_API_URL", "https://api.github.com"), env["GITHUB_TOKEN"])
    try:
        action, comment_id = upsert(request, env["GITHUB_REPOSITORY"], env["KUEUEPLAN_PR"], body)
    except ApiError as err:
        if err.status in (401, 403, 404):
            # Pull requests from forks get a read-only token: the check result still stands, only the
            # comment is missing. Say so, and do not fail the job for it.
            print("::warning::" + gh_data(f"kueueplan could not comment on the pull request ({err}): the token "
                                          "may not write to it (pull requests from forks get a read-only token). "
                                          "The check result above still applies."))
            return 0
        print(f"error: commenting on the pull request failed: {err}", file=sys.stderr)
        return 1
    print(f"{action} comment {comment_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
