// Replaced by the HTTP loader's tests.
