"""Display: records to DataFrames (a column spec per listing), and short text for panels."""

from nbext.models.listing import Column, ListingSpec

from .frames import as_mapping, to_frame
from .show import show_frame

__all__ = ["Column", "ListingSpec", "as_mapping", "show_frame", "to_frame"]
