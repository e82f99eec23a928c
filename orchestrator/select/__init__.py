"""Choosing which resources a function sees (kpt's `selectors`/`exclude`)."""

from .selectors import Selector, selected

__all__ = ["Selector", "selected"]
