/* Every test, as X(name). Add a line here when you add a test function. */
X(test_golden_all_cpu_engines)
X(test_engines_agree_random)
X(test_pairwise_matches_single)
