"""The child entry of ``pwh bench``: ``python -m pwh._bench WORKLOAD N DIR`` runs ``N`` timed
calls of one workload with its stores under ``DIR`` and prints them as one JSON line, for the
parent (:func:`pwh._bench.measure.run_child`) to read. A process per workload keeps each one's peak
memory its own and keeps one workload from warming another's caches.

``python -m pwh._bench ab [memory|sqlite]`` (``pwh bench --ab``) instead prints the in-process A/B
of the two runners (:func:`pwh._bench.workloads.isolation_ab`), which separate children cannot measure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pwh._bench.workloads import BY_NAME, isolation_ab, run_workload


def main(argv: list[str]) -> int:
    if argv and argv[0] == "ab":
        print(json.dumps(isolation_ab(argv[1] if len(argv) > 1 else "memory")))
        return 0
    name, n, workdir = argv[0], int(argv[1]), Path(argv[2])
    result = run_workload(BY_NAME[name], n, workdir)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":  # pragma: no cover - the child entry point
    sys.exit(main(sys.argv[1:]))
