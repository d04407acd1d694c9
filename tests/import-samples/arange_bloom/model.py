import torch
from torch import device

class GraphModule(torch.nn.Module):

    def forward(self, in_0):
        tmp_0 = torch.arange(1, 9, device = device(type='cuda', index=0), dtype = torch.int32)
        tmp_1 = torch.pow(0.5, tmp_0)
        tmp_0 = None
        tmp_2 = torch.arange(10)
        tmp_3 = tmp_2.to(device(type='cuda', index=0))
        tmp_2 = None
        tmp_4 = in_0 * tmp_3
        tmp_5 = torch.arange(0.0, 1.0, 0.125)
        tmp_6 = tmp_5 * tmp_1
        tmp_7 = torch.arange(start = 10, end = 0, step = -3)
        tmp_8 = torch.arange(0.5, 3.7, 1.5, dtype = torch.int32)
        tmp_9 = torch.arange(0.5, 3.7, dtype = torch.int64)
        return (tmp_4, tmp_6, tmp_7, tmp_8, tmp_9)
