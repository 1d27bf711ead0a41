import sys

from mobitrace.cli import main

sys.exit(main())
