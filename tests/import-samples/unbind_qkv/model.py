import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1):
        tmp_0 = in_0.reshape(2, 10, 3, 4, 8)
        tmp_1 = tmp_0.permute(2, 0, 3, 1, 4)
        tmp_0 = None
        q, k, v = tmp_1.unbind(0)
        tmp_1 = None
        tmp_2 = k.transpose(-2, -1)
        tmp_3 = q @ tmp_2
        tmp_4 = tmp_3.softmax(dim=-1)
        tmp_5 = tmp_4 @ v
        unbind = torch.unbind(in_1, dim=-1)
        getitem = unbind[0]
        getitem_1 = unbind[2]
        unbind = None
        tmp_6 = getitem * getitem_1
        return (tmp_5, tmp_6)
