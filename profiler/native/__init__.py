"""Native code: Portcast's Valgrind tool (record C/C++/Fortran regions) and importers of foreign traces.

* :mod:`profiler.native.build`: builds the Valgrind tool from ``vgtool/`` into a cache folder.
* :mod:`profiler.native.record`: runs a program under the tool and streams records into sinks.
* :mod:`profiler.native.importers`: ChampSim binary traces and Valgrind lackey output.
* ``include/portcast.h``: ``PORTCAST_REGION_START/END`` markers for C/C++ (Valgrind client requests).
"""

from pathlib import Path

#: Folder of ``portcast.h`` (pass as ``-I`` when compiling marked programs).
INCLUDE_DIR = Path(__file__).resolve().parent / "include"
