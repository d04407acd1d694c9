import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = in_0[slice(None, None, None), 1:, None, ...]
        tmp_1 = in_1[Ellipsis, -1]
        tmp_2 = in_0[(0, slice(2))]
        tmp_3 = in_0[::2, :-1]
        return tmp_0, tmp_1, tmp_2, tmp_3
