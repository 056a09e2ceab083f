"""Analysis: computations over finished results (statistics, agreement, corrected pass rates, the
guarantee, paper tables, the validity bench's figures). Pure functions; never imports the loop."""
