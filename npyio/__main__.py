"""``python -m npyio``: the npyio command line."""

import sys

from npyio._cli import main

if __name__ == "__main__":
    sys.exit(main())
