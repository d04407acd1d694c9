import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, in_2, in_3):
        tmp_0 = in_0.baddbmm(batch1 = in_1, batch2 = in_2, beta = 1.0, alpha = 0.125)
        tmp_1 = tmp_0.view(1, 4, 10, 10)
        tmp_0 = None
        tmp_2 = torch.rsqrt(in_3 - in_3)
        tmp_3 = tmp_2 - tmp_2
        tmp_4 = torch.baddbmm(tmp_3, in_1, in_2, beta=0.0, alpha=2)
        tmp_5 = torch.baddbmm(in_3, in_1, in_2)
        return (tmp_1, tmp_4, tmp_5)
