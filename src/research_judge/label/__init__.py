"""`research-judge label`: a local page to label sessions pass/fail, one at a time, blind.

``queue`` decides what is shown and in which order, ``store`` appends each label to the labels
file the moment it is given (and undoes the last one), ``run`` is the labelling state both the
page and ``--script`` drive, ``page`` is the offline HTML, ``server`` serves it on 127.0.0.1.
"""

from .queue import Item, load_items, order_items
from .run import LabelRun
from .store import LABEL_COLUMNS, LabelStore

__all__ = ["LABEL_COLUMNS", "Item", "LabelRun", "LabelStore", "load_items", "order_items"]
