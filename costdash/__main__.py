import sys

from costdash.cli import main

sys.exit(main())
