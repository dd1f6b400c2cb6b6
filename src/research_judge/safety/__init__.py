"""What the tool refuses to do to the user's files and budget, kept in one place.

- ``paths``: an output may not be one of the command's inputs, nor a device, FIFO or folder;
- ``lock``: one run at a time per results file;
- ``settings``: numbers must be finite and in range, URLs must not carry credentials.
"""

from .lock import OutputLock
from .paths import check_distinct, check_output_target
from .settings import check_base_url, check_finite

__all__ = [
    "OutputLock",
    "check_base_url",
    "check_distinct",
    "check_finite",
    "check_output_target",
]
