"""Claims of "Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization" (Kornowski, Liu,
Talwar; arXiv:2410.05880)."""
