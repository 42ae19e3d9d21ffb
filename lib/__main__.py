"""``python -m lib``: check that the lab data can be loaded (exit 1 with how to fix it if not)."""
from lib.data import main

raise SystemExit(main())
