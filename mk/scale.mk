# Scale: podfit against conftest, kube-score and kubeconform on generated corpora.
.PHONY: bench

bench: venv tools schemas  ## scale benchmark: 1k/10k/100k objects, podfit (both engines) vs conftest, kube-score, kubeconform
	$(PY) bench/scale.py
