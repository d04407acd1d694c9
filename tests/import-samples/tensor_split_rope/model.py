import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1):
        tensor_split = in_1.tensor_split(2, -1)
        getitem = tensor_split[0]
        getitem_1 = tensor_split[1]
        tensor_split = None
        tmp_0 = in_0 * getitem_1
        getitem_1 = None
        tmp_1 = in_0 * getitem
        getitem = None
        tmp_2 = tmp_0 + tmp_1
        tmp_0 = tmp_1 = None
        tmp_3 = torch.tensor_split(tmp_2, [3, 1, -2], dim=2)
        a, b, c, d = tmp_3
        tmp_4 = torch.tensor_split(c, sections=3, dim=3)
        tmp_5 = tmp_4[2]
        return (a, c, d, tmp_5)
