"""The fuzzers' short run in ``make test``: a fixed, derandomized budget per target (the
Hypothesis profile from conftest.py). ``make fuzz`` runs the same targets for as long as asked.
"""

from __future__ import annotations

from tests.fuzz.fuzzers import FUZZERS

test_damaged_files = FUZZERS["damaged"].test()
test_lenient_headers = FUZZERS["lenient"].test()
test_property_mutations = FUZZERS["properties"].test()
test_random_bytes = FUZZERS["random"].test()
test_static_shapes = FUZZERS["static"].test()
test_batches = FUZZERS["batch"].test()
test_limits = FUZZERS["limits"].test()
test_pack_index = FUZZERS["index"].test(max_examples=30)
