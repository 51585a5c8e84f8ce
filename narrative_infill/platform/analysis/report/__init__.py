"""The paper's tables and Figure 2 from Inspect logs: ``narrative-infill report``.

``load`` turns logs into a frame, ``tables`` and ``human`` compute the tables, ``figures``
draws Figure 2, ``render`` writes the folder.
"""

from ....paper_protocol import DIMENSIONS
from .document import Report
from .human import HumanRatingsError, read_human_ratings
from .load import load_samples
from .render import write_report
from .tables import build_report

__all__ = [
    "DIMENSIONS",
    "HumanRatingsError",
    "Report",
    "build_report",
    "load_samples",
    "read_human_ratings",
    "write_report",
]
