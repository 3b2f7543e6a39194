"""Reads back the fields files the package writes, without DOLFINx, for the tests.

:func:`read_back` runs this file in a process of its own (``python readback.py FILE OUT.npz``):
the readers' libraries (the ``adios2`` wheel's ADIOS2, h5py's HDF5) then cannot meet the ones
DOLFINx loaded, and nothing of DOLFINx is used. The result has ``times``, ``geometry`` and each
field (steps, nodes, 3), one row per node of the stored space, with ``ids`` (VTX: the owned
copies in the order of their global index) or ``skip`` (XDMF without h5py: times and
``nodes`` only).
"""

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np


def read_back(path: str):
    """The file ``path`` (``.bp`` or ``.xdmf``) as a dict of arrays, or a reason (str) why it
    cannot be read."""
    if path.endswith(".bp") and importlib.util.find_spec("adios2") is None:
        return "the adios2 Python module is not installed (pip install adios2)"
    out = path + ".npz"
    subprocess.run([sys.executable, os.path.abspath(__file__), path, out], check=True,
                   timeout=300)
    with np.load(out) as f:
        data = dict(f)
    if "skip" in data:
        data["skip"] = str(data["skip"])
    return data


def read_vtx(path: str) -> dict:
    import adios2

    times, fields = [], {}
    ids = owned = order = geometry = None
    with adios2.Stream(path, "r") as s:
        for _ in s.steps():
            step = s.current_step()
            times.append(float(np.asarray(s.read("step")).reshape(-1)[0]))
            blocks = range(len(s.engine.blocks_info("vtkOriginalPointIds", step)))

            def gather(name, width):  # the writers' blocks, one after the other
                return np.concatenate([s.read(name, block_id=b).reshape(-1, width)
                                       for b in blocks])

            bid = gather("vtkOriginalPointIds", 1)[:, 0]
            ghost = gather("vtkGhostType", 1)[:, 0]
            if ids is None:
                owned = ghost == 0
                order = np.argsort(bid[owned])
                ids = bid[owned][order]
            assert np.array_equal(bid[ghost == 0][order], ids)  # the same nodes in every step
            names = s.available_variables()
            if "geometry" in names:
                geometry = gather("geometry", 3)[owned][order]
            for name in names:
                if name in ("u", "motion") or name.startswith("mode"):
                    fields.setdefault(name, []).append(gather(name, 3)[owned][order])
    out = {"times": np.array(times), "ids": ids, "geometry": geometry}
    out.update({k: np.array(v) for k, v in fields.items()})
    return out


def read_xdmf(path: str) -> dict:
    dom = ET.parse(path).getroot().find("Domain")
    geo = dom.find("Grid/Geometry/DataItem")
    series = {g.get("Name"): g.findall("Grid")
              for g in dom.findall("Grid[@CollectionType='Temporal']")}
    first = next(iter(series.values()))
    out = {"nodes": int(geo.get("Dimensions").split()[0]),
           "times": np.array([float(g.find("Time").get("Value")) for g in first])}
    if importlib.util.find_spec("h5py") is None:
        out["skip"] = "h5py is not installed (Debian: python3-h5py): XDMF values not read"
        return out
    import h5py

    def h5(item):
        name, dataset = item.text.strip().split(":")
        with h5py.File(os.path.join(os.path.dirname(path), name), "r") as f:
            return np.array(f[dataset])

    out["geometry"] = h5(geo)
    for name, grids in series.items():
        out[name] = np.array([h5(g.find("Attribute/DataItem")) for g in grids])
    return out


if __name__ == "__main__":
    reader = read_vtx if sys.argv[1].endswith(".bp") else read_xdmf
    np.savez(sys.argv[2], **reader(sys.argv[1]))
