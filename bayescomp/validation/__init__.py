"""Does the package do what it says? Simulated score collections (``simulate``),
simulation-based calibration of the Stan programs (``sbc``) and the simulation study of
decisions and power (``study``). Used by the tests and the benchmarks, not by a comparison."""
