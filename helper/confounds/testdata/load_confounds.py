"""Reference for helper/confounds: nilearn 0.10.4's load_confounds / load_confounds_strategy.

argv[1]: nilearn's source directory; argv[2]: a JSON list of cases {"img": path of a
*_desc-preproc_bold.nii.gz beside its confounds file, "preset": name or null, "kwargs": {...}}.
Prints one JSON list: per case {"names": [...], "cols": [[...]...], "mask": [...] or null} or
{"error": message}.
"""
import json
import sys
import warnings

sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402

from nilearn.interfaces.fmriprep import load_confounds, load_confounds_strategy  # noqa: E402

warnings.simplefilter("ignore")
out = []
for case in json.load(open(sys.argv[2])):
    kw = case["kwargs"]
    if "strategy" in kw:
        kw["strategy"] = tuple(kw["strategy"])
    try:
        if case["preset"]:
            conf, mask = load_confounds_strategy(case["img"], case["preset"], **kw)
        else:
            conf, mask = load_confounds(case["img"], **kw)
    except (ValueError, AttributeError) as e:  # AttributeError: compcor without a sidecar
        out.append({"error": str(e)})
        continue
    cols = [[None if np.isnan(v) else float(v) for v in conf[c].values] for c in conf.columns]
    out.append({"names": list(conf.columns), "cols": cols,
                "mask": None if mask is None else [int(i) for i in mask]})
print(json.dumps(out))
