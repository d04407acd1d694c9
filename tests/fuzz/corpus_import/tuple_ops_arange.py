import torch
from torch import device

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, w_0, w_1, i):
        q, k, v = in_0.reshape(1, 4, 3, 8).permute(2, 0, 1, 3).unbind(0)
        tmp_0 = in_1.tensor_split(2, -1)
        tmp_1 = torch.tensor_split(in_1, [1, 5], dim=1)[2]
        tmp_2 = q.baddbmm(batch1 = k, batch2 = v.transpose(1, 2), beta = 0.0, alpha = 0.125)
        tmp_3 = torch.conv1d(in_1, w_0, w_1, (2,), (1,), (1,), 1)
        tmp_4 = torch.nn.functional.leaky_relu(tmp_3, 0.1, True)
        tmp_5 = torch.arange(1, 9, device = device(type='cuda', index=0), dtype = torch.int32)
        tmp_6 = tmp_5.to(device(type='cuda', index=0))
        return (tmp_0[1], tmp_1, tmp_2, tmp_4, tmp_6)
