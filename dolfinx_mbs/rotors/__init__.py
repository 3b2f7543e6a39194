"""Rotordynamics on the stationary frame's rotors: the unbalance response (Bode and polar
plots, critical speeds and API 684 amplification factors), the critical speed map, and the
Campbell diagram's plot with the log dec; plain journal bearings whose oil film is solved
from the Reynolds equation (:class:`PlainJournal`: equilibrium, coefficients, the nonlinear
film force; ``Model.bearing(..., journal=film, load=...)`` puts one under a rotor).
Bearings and disks are defined in
:mod:`dolfinx_mbs.bodies.attachments`, the stationary frame in :mod:`dolfinx_mbs.frames.stationary`,
their physics in :mod:`dolfinx_mbs.forms.stationary`; the Campbell sweep itself is
:mod:`dolfinx_mbs.campbell`."""

from dolfinx_mbs.rotors.critical import CriticalSpeedMap, critical_speed_map
from dolfinx_mbs.rotors.film import Equilibrium, FilmState, PlainJournal
from dolfinx_mbs.rotors.plots import campbell_log_dec
from dolfinx_mbs.rotors.unbalance import Peak, UnbalanceResponse, unbalance_response

__all__ = ["CriticalSpeedMap", "Equilibrium", "FilmState", "Peak", "PlainJournal",
           "UnbalanceResponse", "campbell_log_dec", "critical_speed_map", "unbalance_response"]
