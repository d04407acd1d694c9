import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1):
        tmp_0 = torch.nn.functional.pad(in_0, [2, 2, 2, 2])
        tmp_1 = tmp_0.unfold(2, 12, 8)
        tmp_0 = None
        tmp_2 = tmp_1.unfold(3, 12, 8)
        tmp_1 = None
        tmp_3 = tmp_2.reshape(4, 16, 4, -1)
        tmp_2 = None
        tmp_4 = tmp_3.permute(0, 2, 3, 1)
        tmp_3 = None
        split = torch.functional.split(tmp_4, [8, 8], dim = -1)
        tmp_4 = None
        getitem = split[0]
        getitem_1 = split[1]
        split = None
        tmp_5 = in_1.unfold(-1, 3, 2)
        tmp_6 = in_1.unfold(dimension = 1, size = 2, step = 3)
        tmp_7 = tmp_5 * 2.0
        return (getitem, getitem_1, tmp_6, tmp_7)
