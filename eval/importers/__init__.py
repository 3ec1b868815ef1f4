"""Importers and exporters for public benchmarks (LoCoMo, LongMemEval) into keme dataset directories."""
