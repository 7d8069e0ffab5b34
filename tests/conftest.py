"""Suite-wide test settings.

CI has no GPU: GPU ports run on numba-cuda's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set
explicitly (set it to 0 on a machine with an NVIDIA GPU to run them on the device). This must happen
before anything imports numba.cuda, hence here.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
