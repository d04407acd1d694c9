import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = in_0 + in_1
        tmp_1 = 0.5 * tmp_0
        tmp_0 = None
        return (tmp_1,)
