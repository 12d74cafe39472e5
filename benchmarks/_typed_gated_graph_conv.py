"""`TypedGatedGraphConv`: the PyG-side baseline of typed GG-NN edges."""

import torch
from torch_geometric.utils import scatter


class TypedGatedGraphConv(torch.nn.Module):
    """GG-NN propagation with typed edges, written with PyG's `scatter`.

    The PyG-side counterpart of `GatedGraph(num_edge_types=T)`: per step,
    every node state is transformed by each of the `T` edge-type kernels in
    one batched matmul, each edge gathers the transform of its type at its
    source, messages are summed at their targets, and a `GRUCell` updates
    the nodes. Reverse edges are passed in as extra edges of their own
    types, as `GatedGraph(add_reverse_edges=True)` does inside.
    """

    def __init__(self, units, num_edge_types, num_layers):
        super().__init__()
        self.units = units
        self.num_layers = num_layers
        self.weight = torch.nn.Parameter(
            torch.empty(num_edge_types, units, units)
        )
        torch.nn.init.xavier_uniform_(self.weight)
        self.rnn = torch.nn.GRUCell(units, units)

    def forward(self, x, edge_index, edge_type):
        if x.size(-1) < self.units:
            x = torch.cat(
                [x, x.new_zeros(x.size(0), self.units - x.size(-1))], dim=-1
            )
        num_nodes = x.size(0)
        source, target = edge_index
        gather_index = edge_type * num_nodes + source
        for _ in range(self.num_layers):
            transformed = torch.matmul(x.unsqueeze(0), self.weight)
            messages = transformed.reshape(-1, self.units)[gather_index]
            aggregated = scatter(
                messages, target, dim=0, dim_size=num_nodes, reduce="sum"
            )
            x = self.rnn(aggregated, x)
        return x
