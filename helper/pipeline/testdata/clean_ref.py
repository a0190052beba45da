"""Reference for helper/pipeline's cleaning: nilearn 0.10.4 on the raw series HubScope loaded.

argv: nilearn dir, case ("simple" | "raw"), bold image path, raw series (N×T float32 .f32),
N, T, TR, output (T'×N float64). "simple": load_confounds_strategy(bold, "simple") then
signal.clean(detrend=True, standardize="zscore_sample", t_r=TR) — what --denoise simple promises;
"raw": high_variance_confounds(5, 2 %) then signal.clean with Butterworth 0.01–0.08 Hz.
"""
import sys
import warnings

sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402

from nilearn import signal  # noqa: E402
from nilearn.interfaces.fmriprep import load_confounds_strategy  # noqa: E402

warnings.simplefilter("ignore")
case, bold = sys.argv[2], sys.argv[3]
n, t, tr = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
x = np.fromfile(sys.argv[4], dtype=np.float32).reshape(n, t).T.astype(np.float64)
if case == "simple":
    conf, sm = load_confounds_strategy(bold, denoise_strategy="simple")
    y = signal.clean(x, confounds=conf, sample_mask=sm, detrend=True, standardize="zscore_sample", t_r=tr)
else:
    hv = signal.high_variance_confounds(x, n_confounds=5, percentile=2.0, detrend=True)
    y = signal.clean(x, confounds=hv, detrend=True, standardize="zscore_sample", filter="butterworth",
                     high_pass=0.01, low_pass=0.08, t_r=tr)
np.ascontiguousarray(y, dtype=np.float64).tofile(sys.argv[8])
