"""Rotordynamics on the stationary frame's rotors: the parts a rotor rests on and carries
(bearings with their coefficients over speed, rigid disks, unbalances: their builders in
:mod:`dolfinx_mbs.rotors.parts`, which ``Model.bearing``, ``Model.disk`` and ``Model.unbalance``
forward to, and their data classes, defined low in :mod:`dolfinx_mbs.bodies.attachments` so
that the operators read them, re-exported here); the unbalance response (Bode and polar
plots, critical speeds and API 684 amplification factors), the critical speed map, and the
Campbell diagram's plot with the log dec; plain journal bearings whose oil film is solved
from the Reynolds equation (:class:`PlainJournal`: equilibrium, coefficients, the nonlinear
film force; ``Model.bearing(..., journal=film, load=...)`` puts one under a rotor). The
stationary frame is in :mod:`dolfinx_mbs.frames.stationary`, the physics in
:mod:`dolfinx_mbs.forms.stationary`; the Campbell sweep itself is :mod:`dolfinx_mbs.campbell`."""

from dolfinx_mbs.bodies.attachments import (
    AxialTilt,
    Coefficients,
    Housing,
    SpeedTerm,
)
from dolfinx_mbs.bodies.attachments import (
    Bearing as Bearing,
)
from dolfinx_mbs.bodies.attachments import (
    Disk as Disk,
)
from dolfinx_mbs.bodies.attachments import (
    Unbalance as Unbalance,
)
from dolfinx_mbs.rotors import parts
from dolfinx_mbs.rotors.critical import CriticalSpeedMap, critical_speed_map
from dolfinx_mbs.rotors.film import Equilibrium, FilmState, PlainJournal
from dolfinx_mbs.rotors.plots import campbell_log_dec
from dolfinx_mbs.rotors.unbalance import Peak, UnbalanceResponse, unbalance_response

# Bearing, Disk and Unbalance are importable here too (mbs.rotors.Bearing), documented once,
# in dolfinx_mbs.bodies
__all__ = ["AxialTilt", "Coefficients", "CriticalSpeedMap", "Equilibrium",
           "FilmState", "Housing", "Peak", "PlainJournal", "SpeedTerm",
           "UnbalanceResponse", "campbell_log_dec", "critical_speed_map", "parts",
           "unbalance_response"]
