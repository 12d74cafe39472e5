"""Exporting models of this package for serving."""

from keras_recurrent.export.saved_model import export_saved_model

__all__ = ["export_saved_model"]
