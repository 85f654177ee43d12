"""The Python binding of LocalReader (`import tandem`), against a live replica.

Run by tests/integration/local_reader_python_test.cc, which starts the replica and defines:
  u2: an index keyed by k over a log source (k, v), at times 0..2:
      t=0: (1, 10) (2, 20) (3, 30)   t=1: +(1, 11)   t=2: -(2, 20)
      upper 3, so the latest readable time is 2;
  u4: the same log through v / 0 — every row a division by zero, so u4 has an error.
Usage: python3 local_reader_test.py SEGMENT
"""

import sys
import threading
import unittest

import tandem

SEGMENT = None


class LocalReaderBinding(unittest.TestCase):
    def setUp(self):
        self.reader = tandem.LocalReader(SEGMENT)

    def test_a_lookup_returns_rows_with_counts_at_a_time_and_at_latest(self):
        self.assertEqual(self.reader.lookup("u2", [1], at=0), (0, [((1, 10), 1)]))
        t, rows = self.reader.lookup("u2", [1])
        self.assertEqual(t, 2)
        self.assertEqual(sorted(rows), [((1, 10), 1), ((1, 11), 1)])
        self.assertEqual(self.reader.lookup("u2", [2], at=1), (1, [((2, 20), 1)]))
        self.assertEqual(self.reader.lookup("u2", [2]), (2, []))
        self.assertEqual(self.reader.lookup("u2", [99]), (2, []))
        self.assertEqual(self.reader.latest("u2"), 2)

    def test_scans_read_every_key_a_prefix_or_a_range(self):
        t, rows = self.reader.scan("u2", at=0)
        self.assertEqual(t, 0)
        self.assertEqual(sorted(rows), [((1, 10), 1), ((2, 20), 1), ((3, 30), 1)])
        _, rows = self.reader.scan("u2", prefix=[3])
        self.assertEqual(rows, [((3, 30), 1)])
        _, rows = self.reader.scan("u2", lower=[2], upper=[4], at=0)
        self.assertEqual(sorted(rows), [((2, 20), 1), ((3, 30), 1)])

    def test_errors_raise_the_exception_that_names_them(self):
        with self.assertRaises(tandem.DataError) as e:
            self.reader.lookup("u4", [1])
        self.assertIn("division by zero", str(e.exception))
        self.assertEqual(e.exception.code, "DataError")
        with self.assertRaises(tandem.NotFound):
            self.reader.lookup("u77", [1])
        with self.assertRaises(tandem.NotReadable) as e:
            self.reader.lookup("u2", [1], at=3)
        self.assertIn("not complete yet", str(e.exception))
        self.assertTrue(issubclass(tandem.ReplicaGone, tandem.Error))
        with self.assertRaises(ValueError):
            self.reader.lookup("not-an-id", [1])
        with self.assertRaises(TypeError):
            self.reader.lookup("u2", [object()])
        with self.assertRaises(tandem.NotFound):
            tandem.LocalReader(SEGMENT + ".no-such-replica")

    def test_datums_of_every_type_are_keys(self):
        # No index has such keys: each lookup is simply empty, but every datum type converts.
        for key in ([None], [True], [-(2**63)], [1.5], ["text"], []):
            self.assertEqual(self.reader.lookup("u2", key, at=2), (2, []))

    def test_indexes_lists_what_the_segment_publishes(self):
        ids = {i["id"]: i for i in self.reader.indexes()}
        self.assertIn("u2", ids)
        self.assertEqual(ids["u2"]["upper"], 3)
        self.assertGreater(ids["u2"]["updates"], 0)

    def test_threads_read_in_parallel_with_a_reader_each(self):
        failures = []

        def work():
            try:
                mine = tandem.LocalReader(SEGMENT)
                for _ in range(2000):
                    if mine.lookup("u2", [3], at=2) != (2, [((3, 30), 1)]):
                        failures.append("wrong answer")
                        return
            except Exception as e:  # noqa: BLE001 — reported by the assertion below
                failures.append(repr(e))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])


if __name__ == "__main__":
    SEGMENT = sys.argv.pop(1)
    unittest.main(verbosity=2)
