"""dpzero Algorithm 2 and MeZO on PyTorch models (dpzero §2.4, §5): the torch backend.

* ``reference.torch_backend.dpzero``: ``dpzero(model, per_example_loss, data, ...)`` and ``mezo`` on any
  ``torch.nn.Module``, forward passes only, with the reference's plan, streams and switches;
* ``reference.torch_backend.directions``: u_t regenerated per parameter tensor from keyed public streams;
* ``reference.torch_backend.vector``: the same backend behind the reference's signature (a claim subject).

Needs the optional extra ``torch`` (``pip install torch==2.13.0`` first: the CPU build). Importing this package
imports torch; nothing else in ``reference`` does.
"""
