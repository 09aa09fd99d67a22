"""Run many `stille-post` command lines from one interpreter that imported the CLI once.

    python tests/cli/forkrun.py < requests.json > codes.json

Each request is {"argv": [...], "cwd": DIR, "stdout": FILE, "stderr": FILE}. For each,
the server forks; the child points file descriptors 0/1/2 at /dev/null and the two files,
runs `stille_post.cli.main(argv)` exactly as the console script does, and exits with its
code. The answer is the list of exit codes, in request order.

Why: the bad-input table has ~90 cases, and a fresh interpreter costs ~0.3 s of CPU to
import the CLI, which was a third of the suite's CPU. A forked child starts from a clean
interpreter that is not pytest (no capture, no warning recorder, no threads), so what it
prints and returns is what a user would see; the table still runs a few cases through the
installed console script itself and checks that both ways agree.
"""

from __future__ import annotations

import json
import os
import sys


def _child(argv: list[str], cwd: str, out: str, err: str) -> None:
    code = 70
    try:
        os.chdir(cwd)
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(path, flags, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                          closefd=False)
        sys.argv = ["stille-post", *argv]
        from stille_post.cli import main

        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # a crash the CLI did not catch: show it, as Python would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(requests: list[dict[str, object]], parallel: int) -> list[int]:
    import stille_post.cli  # noqa: F401  (imported once, before any fork)

    codes: list[int] = [0] * len(requests)
    running: dict[int, int] = {}
    pending = list(enumerate(requests))
    while pending or running:
        while pending and len(running) < parallel:
            index, r = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(list(r["argv"]), str(r["cwd"]),  # type: ignore[call-overload]
                       str(r["stdout"]), str(r["stderr"]))
            running[pid] = index
        pid, status = os.wait()
        codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    return codes


if __name__ == "__main__":
    requests = json.load(sys.stdin)
    print(json.dumps(serve(requests, max(1, os.cpu_count() or 1))))
