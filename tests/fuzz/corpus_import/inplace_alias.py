import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        in_1 += in_0
        tmp_0 = in_1
        tmp_0 *= 2
        tmp_1 = tmp_0.sigmoid()
        tmp_1.add_(1.0)
        tmp_2 = -tmp_1 ** 2 / 3 - 1
        return (tmp_2, in_1)
