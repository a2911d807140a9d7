"""docs/MIGRATING.md's Python example runs as written, and the amgsolve iteration count its comment states is
the one the solve takes (its PyAMG counts are PyAMG's, whichever version is installed: not checked)."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIGRATING = os.path.join(ROOT, "docs", "MIGRATING.md")


def python_blocks(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```$", f.read(), flags=re.S | re.M)


def test_the_migration_guides_python_example_runs_and_states_amgsolves_count():
    pytest.importorskip("pyamg", reason="the example sets PyAMG beside amgsolve (scripts/python installs it)")
    blocks = python_blocks(MIGRATING)
    assert len(blocks) == 1, f"{MIGRATING}: expected its one ```python example, found {len(blocks)}"
    claimed = re.search(r'info\["iterations"\] == (\d+)', blocks[0])
    assert claimed, "the example no longer states amgsolve's iteration count in a comment"
    namespace = {}
    exec(compile(blocks[0], MIGRATING, "exec"), namespace)
    assert namespace["info"]["iterations"] == int(claimed.group(1))
    assert namespace["info"]["converged"]
    assert namespace["status"] == 0, "scipy's cg with amgsolve's cycle as M did not converge"
