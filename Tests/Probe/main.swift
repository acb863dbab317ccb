// A second process for the tests: filled in by the disk-cache tests.
import WebImageCore
