"""Output: a field's values at points and probes at material points (parallel point ownership),
time series written row by row, field files (VTX, or XDMF on DOLFINx 0.5) and what they keep
after a kill."""

from dolfinx_mbs.io.field_restart import (
    copy_vtx_steps,
    drop_previous,
    keep_xdmf_times,
    set_aside,
    vtx_times,
)
from dolfinx_mbs.io.output import (
    FieldFile,
    MotionWriter,
    Probes,
    TimeSeriesWriter,
    mode_functions,
    pyplot,
    write_mode_functions,
    write_modes,
)
from dolfinx_mbs.io.points import evaluate

__all__ = [
    "copy_vtx_steps",
    "drop_previous",
    "evaluate",
    "FieldFile",
    "keep_xdmf_times",
    "mode_functions",
    "MotionWriter",
    "Probes",
    "pyplot",
    "set_aside",
    "TimeSeriesWriter",
    "vtx_times",
    "write_mode_functions",
    "write_modes",
]
