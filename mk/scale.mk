# Scale: podfit against conftest, kube-score and kubeconform on generated corpora.
.PHONY: bench

bench: venv tools-bench schemas  ## scale benchmark (1k/10k/100k objects) and one small file (the hook's case), podfit vs conftest, kube-score, kubeconform
	$(PY) bench/hook.py
	$(PY) bench/scale.py
