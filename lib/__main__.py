"""``python -m lib``: check that the lab data can be loaded (exit 1 with how to fix it if not)."""
import os
import sys

from lib.data import REGISTRY, DataError, fetch, load_lab_data


def main() -> int:
    """Load the lab data and say where it came from; exit 1 with the fix if it cannot."""
    try:
        X, y = load_lab_data()
    except (DataError, OSError) as err:   # OSError: e.g. an unreadable BLC_DATA_DIR folder
        print(f"lab data unavailable: {err}", file=sys.stderr)
        return 1
    print(f"lab data OK: X {X.shape}, y {y.shape}, {int((y == 0).sum())} zeros, {int((y == 1).sum())} ones")
    where = "the folder named by BLC_DATA_DIR" if os.environ.get("BLC_DATA_DIR") else "the cache"
    for name in REGISTRY:
        print(f"  {name}: from {where} ({fetch(name)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
