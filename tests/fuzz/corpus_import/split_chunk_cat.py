import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = torch.functional.split(in_0, [1, 2], dim=1)
        tmp_1 = tmp_0[0]
        tmp_2 = tmp_0[1]
        tmp_0 = None
        tmp_3 = in_1.chunk(2, dim=-1)[1]
        tmp_4 = torch.cat([tmp_1, tmp_2], 1)
        return (tmp_3, tmp_4)
