import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, in_2, in_3, in_4):
        tmp_0 = torch.conv1d(in_0, in_1, None, (5,), (0,), (1,), 1)
        tmp_1 = torch.nn.functional.gelu(tmp_0)
        tmp_0 = None
        tmp_2 = torch.conv1d(tmp_1, in_2, in_3, (2,), (1,), (2,), 4)
        tmp_1 = None
        tmp_3 = torch.nn.functional.conv1d(tmp_2, in_4, padding='same')
        return (tmp_2, tmp_3)
