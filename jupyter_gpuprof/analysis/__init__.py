"""Analysis: a Kineto trace -> documented DataFrames and figures; pure, never displays."""
