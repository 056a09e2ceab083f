"""The test suite, a regular package: ppi_python (a dependency) installs a top-level package named
``tests`` into site-packages, and a regular package anywhere on the path wins over a namespace one,
so without this file ``from tests.workers import …`` would import ppi_python's tests."""
