import sys

from amp.cli import main

sys.exit(main())
