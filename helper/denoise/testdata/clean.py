"""Reference for helper/denoise: nilearn 0.10.4's signal.clean on the cases the Go test wrote.

argv[2]: nilearn's source directory. argv[1]: a JSON list of cases, each {"x": file (T×N float64, time along rows), "t": T, "n": N,
"confounds": file or null (T×k float64), "k": k, "mask": [indices] or null, "kwargs": {...},
"fixed_interpolation": bool, "out": file}. Writes the cleaned series (T'×N float64) to "out".

fixed_interpolation: nilearn 0.10.4's _interpolate_volumes indexes with ~sample_mask on an
integer index array (a bitwise not, i.e. the mirror-image volumes), so a censored volume whose
mirror is also censored is left un-interpolated. HubScope interpolates every censored volume;
for cases with such pairs the reference replaces the helper by the same code on a boolean mask.
"""
import json
import sys
import warnings

sys.path.insert(0, sys.argv[2])  # nilearn's source directory

import numpy as np  # noqa: E402
from scipy.interpolate import CubicSpline

from nilearn import signal  # noqa: E402


def fixed_interpolate(volumes, sample_mask, t_r, extrapolate):
    keep = np.zeros(volumes.shape[0], dtype=bool)
    keep[sample_mask] = True
    frame_times = np.arange(volumes.shape[0]) * t_r
    spline = CubicSpline(frame_times[keep], volumes[keep, :], extrapolate=extrapolate)
    volumes[~keep, :] = spline(frame_times)[~keep, :]
    return volumes


original = signal._interpolate_volumes
warnings.simplefilter("ignore")
for case in json.load(open(sys.argv[1])):
    x = np.fromfile(case["x"], dtype=np.float64).reshape(case["t"], case["n"])
    conf = None
    if case["confounds"]:
        conf = np.fromfile(case["confounds"], dtype=np.float64).reshape(case["t"], case["k"])
    mask = None if case["mask"] is None else np.array(case["mask"], dtype=int)
    signal._interpolate_volumes = fixed_interpolate if case["fixed_interpolation"] else original
    kwargs = case["kwargs"]
    for key in ("t_r", "high_pass", "low_pass"):  # JSON writes 2.0 as 2; nilearn wants floats
        if key in kwargs:
            kwargs[key] = float(kwargs[key])
    y = signal.clean(x, confounds=conf, sample_mask=mask, **kwargs)
    np.ascontiguousarray(y, dtype=np.float64).tofile(case["out"])
