import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        tmp_0 = in_0.view(2, -1)
        tmp_1 = tmp_0.transpose(0, 1)
        tmp_2 = tmp_1.contiguous()
        tmp_3 = in_1.permute((2, 0, 1)).reshape(4, 6)
        tmp_4 = in_0.flatten(1).expand(2, -1)
        return (tmp_2, tmp_3, tmp_4)
